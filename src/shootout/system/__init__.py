"""Everything that changes the machine goes through the change journal in journal.py."""
