"""The literature's claims as named, re-runnable checks (later issue)."""
