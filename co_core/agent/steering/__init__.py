"""Co steering a model too small to steer itself: tool choice, constrained calls, answers."""
