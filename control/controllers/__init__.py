"""The controllers hosted by the controller-manager. Each imports only the spoke toolkit."""
