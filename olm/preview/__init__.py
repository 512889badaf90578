"""The upgrade preview of an InstallPlan (issue 26 item 2): pure, from plain data."""
