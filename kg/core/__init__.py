"""What every layer uses: the one error hierarchy, the one settings table, progress on a terminal."""
