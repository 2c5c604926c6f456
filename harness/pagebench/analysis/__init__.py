"""What the store's runs say: statistics, the one per-condition summary, the regression
gate, flat exports and the reports. Reads the store only, never the lab: analysis reruns
without measuring."""
