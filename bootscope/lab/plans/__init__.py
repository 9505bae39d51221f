"""Plans: variants (one syntax), run settings, schedules and the stopping rule."""
