"""Texts that Markdown would mangle, for the tests of what the chat shows as it is."""

PYTHON = '''import sys


def main(argv):
    """Print a __dunder__ name and a snake_case one."""
    my_value = argv[1] if len(argv) > 1 else "__none__"

    print(f"value: {my_value}")


if __name__ == "__main__":
    main(sys.argv)
'''

NOTES = """first_name: Ada
last_name:  Lovelace


__private__ notes_v2 follow
    indented_line   with  runs   of  spaces
*not emphasis* and <not a tag> and # not a heading
"""
