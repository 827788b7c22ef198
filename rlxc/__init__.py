"""rlxc."""
