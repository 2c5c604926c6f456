"""What the store's runs say: statistics, per-condition summaries, the regression gate
and the reports. Reads the store only, never the lab: analysis reruns without measuring."""
