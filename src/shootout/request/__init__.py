"""What the user asked for, resolved once: configurations, workloads, settings, prices; then prepared."""
