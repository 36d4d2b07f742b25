"""What a run's readers found, shown: the HTML run report, the compare page, the terminal
summary and lineage lines, their charts and the one HTML toolkit they share."""
