"""Data package: shipped inside the cohsim wheel (see pyproject.toml); holds no code."""
