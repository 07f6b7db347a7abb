"""The ingress controller (in the restaurant: the maître d' at the front door), a spoke that serves
the Ingresses of its IngressClass on an address the host machine reaches (see `controller`)."""
