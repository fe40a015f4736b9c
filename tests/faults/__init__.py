"""The fault suite: 3 replicas, their own Redis with AOF, PostgreSQL and the fake MAX, under trouble."""
