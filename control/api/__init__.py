"""The hub's HTTP face: routing, discovery, OpenAPI, verbs, watch, patch, errors, traffic."""
