"""What a simulated pod's web server answers: the pages of the server images (nginx's "Welcome to
nginx!" and its 404, httpd's "It works!") and, for any other image, the JSON line that names the
pod (`{"pod", "namespace", "node", "podIP", "port"}`).

Guarantees: pure (no I/O, no clock of its own: `now` is passed in), so the kubelet's port-forward
and /serve, a shell's wget/curl and the front door (Ingress, Gateway) all answer a request to a pod
the same way. `flavour_for(pod, port)` says which server a pod runs on a port; `Listener.answer`
gives (status, headers, body) for one request.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from email.utils import formatdate
from typing import Any
from urllib.parse import urlsplit

# image name (last path part, no tag) -> (flavour of its answers, the port its entrypoint listens on)
SERVER_IMAGES = {"nginx": ("nginx", 80), "nginx-unprivileged": ("nginx", 8080), "httpd": ("httpd", 80),
                 "apache": ("httpd", 80), "caddy": ("json", 80), "whoami": ("json", 80),
                 "echoserver": ("json", 8080), "hello-app": ("json", 8080), "http-echo": ("json", 5678)}
NGINX = "nginx/1.27.3"
NGINX_INDEX = b"""<!DOCTYPE html>
<html>
<head>
<title>Welcome to nginx!</title>
<style>
html { color-scheme: light dark; }
body { width: 35em; margin: 0 auto;
font-family: Tahoma, Verdana, Arial, sans-serif; }
</style>
</head>
<body>
<h1>Welcome to nginx!</h1>
<p>If you see this page, the nginx web server is successfully installed and
working. Further configuration is required.</p>

<p>For online documentation and support please refer to
<a href="http://nginx.org/">nginx.org</a>.<br/>
Commercial support is available at
<a href="http://nginx.com/">nginx.com</a>.</p>

<p><em>Thank you for using nginx.</em></p>
</body>
</html>
"""
NGINX_404 = (b"<html>\r\n<head><title>404 Not Found</title></head>\r\n<body>\r\n<center><h1>404 Not Found</h1>"
             b"</center>\r\n<hr><center>" + NGINX.encode() + b"</center>\r\n</body>\r\n</html>\r\n")
HTTPD = "Apache/2.4.62 (Unix)"
HTTPD_INDEX = b"<html><body><h1>It works!</h1></body></html>\n"
HTTPD_404 = (b'<!DOCTYPE HTML PUBLIC "-//IETF//DTD HTML 2.0//EN">\n<html><head>\n<title>404 Not Found</title>\n'
             b"</head><body>\n<h1>Not Found</h1>\n<p>The requested URL was not found on this server.</p>\n"
             b"</body></html>\n")
REASONS = {200: b"OK", 400: b"Bad Request", 404: b"Not Found"}


@dataclass(frozen=True)
class Listener:
    """The simulated server behind one port of one pod."""
    flavour: str  # nginx | httpd | json
    pod: str
    namespace: str
    node: str
    pod_ip: str
    port: int
    uid: str

    def answer(self, method: str, target: str, now: float) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
        """(status, headers, body) of one request."""
        path = urlsplit(target).path or "/"
        date = (b"date", formatdate(now, usegmt=True).encode())
        if self.flavour == "nginx":
            found = path in ("/", "/index.html")
            return (200 if found else 404), [(b"server", NGINX.encode()), date, (b"content-type", b"text/html")], \
                NGINX_INDEX if found else NGINX_404
        if self.flavour == "httpd":
            found = path in ("/", "/index.html")
            kind = b"text/html" if found else b"text/html; charset=iso-8859-1"
            return (200 if found else 404), [date, (b"server", HTTPD.encode()), (b"content-type", kind)], \
                HTTPD_INDEX if found else HTTPD_404
        body = {"pod": self.pod, "namespace": self.namespace, "node": self.node, "podIP": self.pod_ip,
                "port": self.port}
        return 200, [date, (b"content-type", b"application/json")], \
            json.dumps(body, separators=(",", ":")).encode() + b"\n"


def image_name(image: str) -> str:
    return image.rsplit("/", 1)[-1].split("@", 1)[0].split(":", 1)[0]


def flavour_for(pod: dict[str, Any], port: int | None) -> str:
    """The simulated server a pod answers with on `port` (nginx | httpd | json), as port-forward
    would serve it; a port no container declares or usually listens on answers the JSON line."""
    for spec in (pod.get("spec") or {}).get("containers") or []:
        declared = {p.get("containerPort") for p in spec.get("ports") or [] if isinstance(p, dict)}
        flavour, usual = SERVER_IMAGES.get(image_name(str(spec.get("image") or "")), ("json", None))
        if port is None or port in declared or port == usual:
            return flavour
    return "json"
