"""The enforcement layer: every write, read and command of every actor goes through here."""
