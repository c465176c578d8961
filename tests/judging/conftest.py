from judging_fixtures import dialogues, voice  # noqa: F401  (fixtures)
