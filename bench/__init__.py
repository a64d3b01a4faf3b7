"""`make bench`: kubeinformers against the official client and the raw floors, in one run."""
