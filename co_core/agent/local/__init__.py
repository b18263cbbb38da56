"""The local-model kit: Co's own llama.cpp server, and what makes a tiny model usable."""
