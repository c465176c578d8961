from report_fixtures import judged, secret  # noqa: F401  (fixtures)
