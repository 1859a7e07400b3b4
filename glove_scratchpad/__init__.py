"""glove-scratchpad: an agent's tools as tables of one virtual PostgreSQL database."""
