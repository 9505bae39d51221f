"""Watch boot time across revisions and machines: series by fingerprint, alerts, triage."""
