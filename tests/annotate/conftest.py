from page_fixtures import judged, served  # noqa: F401  (fixtures)
