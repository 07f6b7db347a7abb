"""OpenAPI schemas of a container and what hangs off it: ports, environment, resources, mounts,
probes, lifecycle hooks and security settings.

Guarantees: containers' ports merge by containerPort, env by name, volumeMounts by mountPath and
volumeDevices by devicePath (strategic merge); every field kubectl or a docs manifest uses on a
container is declared, so strict decoding does not reject it.
"""

from __future__ import annotations

from control.kinds.schemas.build import (
    Schema, array, boolean, int32, int64, int_or_string, obj, quantity, quantity_map, ref, string,
    strings,
)

_PROBE = "Probe"
_PROTOCOLS = ["SCTP", "TCP", "UDP"]


def _container_properties(kind: str) -> dict[str, Schema]:
    """Fields shared by Container and EphemeralContainer."""
    return {
        "args": strings("Arguments to the entrypoint; replaces the image's CMD. $(VAR) refers to "
                        "container environment variables.", list_type="atomic"),
        "command": strings("Entrypoint array, not run in a shell; replaces the image's ENTRYPOINT.",
                           list_type="atomic"),
        "env": array("EnvVar", "Environment variables set in the container.", strategy="merge", key="name"),
        "envFrom": array("EnvFromSource", "Sources whose keys all become environment variables; "
                         "explicit `env` entries win on clashes."),
        "image": string("Container image reference, e.g. nginx:1.27."),
        "imagePullPolicy": string("When to pull the image: Always, Never or IfNotPresent (default "
                                  "Always for :latest, else IfNotPresent).",
                                  enum=["Always", "IfNotPresent", "Never"]),
        "lifecycle": ref("Lifecycle", "Hooks run right after the container starts and before it "
                         "stops.", default=False),
        "livenessProbe": ref(_PROBE, "Check that restarts the container when it fails.", default=False),
        "name": string(f"Name of the {kind}, a DNS label unique within the pod. Cannot be updated."),
        "ports": array("ContainerPort", "Ports the container exposes; informational, the process may "
                       "listen on others.", strategy="merge", key="containerPort", list_type="map",
                       map_keys=["containerPort", "protocol"]),
        "readinessProbe": ref(_PROBE, "Check that takes the pod out of Service endpoints while it "
                              "fails.", default=False),
        "resizePolicy": array("ContainerResizePolicy", "How each resource may be resized in place.",
                              list_type="atomic"),
        "resources": ref("ResourceRequirements", "Compute resources requested and limited for this "
                         "container."),
        "restartPolicy": string("For init containers only: \"Always\" makes it a sidecar that keeps "
                                "running alongside the app containers."),
        "restartPolicyRules": array("ContainerRestartRule", "Rules that decide, by exit code, "
                                    "whether the container is restarted.", list_type="atomic"),
        "securityContext": ref("SecurityContext", "Security options for the container; they override "
                               "the pod's.", default=False),
        "startupProbe": ref(_PROBE, "Check that must succeed once before the other probes start.",
                            default=False),
        "stdin": boolean("Keep a stdin buffer open for the container."),
        "stdinOnce": boolean("Close stdin after the first attached client disconnects."),
        "terminationMessagePath": string("File whose content becomes the termination message "
                                         "(default /dev/termination-log)."),
        "terminationMessagePolicy": string("Where the termination message comes from: File, or "
                                           "FallbackToLogsOnError.",
                                           enum=["FallbackToLogsOnError", "File"]),
        "tty": boolean("Allocate a TTY (needs stdin)."),
        "volumeDevices": array("VolumeDevice", "Raw block devices made available to the container.",
                               strategy="merge", key="devicePath"),
        "volumeMounts": array("VolumeMount", "Pod volumes mounted into the container's filesystem.",
                              strategy="merge", key="mountPath"),
        "workingDir": string("Working directory; the image's default if empty."),
    }


_ephemeral = _container_properties("ephemeral container")
_ephemeral["targetContainerName"] = string("Name of the container whose namespaces this debugging "
                                           "container joins.")

_HANDLER_FIELDS: dict[str, Schema] = {
    "exec": ref("ExecAction", "Run a command inside the container.", default=False),
    "httpGet": ref("HTTPGetAction", "Send an HTTP GET request.", default=False),
    "tcpSocket": ref("TCPSocketAction", "Open a TCP connection.", default=False),
}

DEFINITIONS: dict[str, Schema] = {
    "io.k8s.api.core.v1.Container": obj(
        "One application container in a pod.", _container_properties("container"), required=["name"],
    ),
    "io.k8s.api.core.v1.EphemeralContainer": obj(
        "A temporary container added to a running pod for debugging; it is never restarted and has "
        "no ports, probes or resources.", _ephemeral, required=["name"],
    ),
    "io.k8s.api.core.v1.ContainerPort": obj(
        "A network port of one container.",
        {
            "containerPort": int32("Port number on the pod's IP, 1-65535."),
            "hostIP": string("Host IP to bind an exposed host port to."),
            "hostPort": int32("Port number to expose on the host, 1-65535; most pods leave it "
                              "empty."),
            "name": string("IANA_SVC_NAME that Services can refer to; unique within the pod."),
            "protocol": string("TCP (default), UDP or SCTP.", enum=_PROTOCOLS),
        },
        required=["containerPort"],
    ),
    "io.k8s.api.core.v1.EnvVar": obj(
        "One environment variable.",
        {
            "name": string("Variable name."),
            "value": string("Literal value; $(VAR) expands earlier variables. Defaults to \"\"."),
            "valueFrom": ref("EnvVarSource", "Where to read the value from; not allowed together "
                             "with `value`.", default=False),
        },
        required=["name"],
    ),
    "io.k8s.api.core.v1.EnvVarSource": obj(
        "Source of an environment variable's value; exactly one field is set.",
        {
            "configMapKeyRef": ref("ConfigMapKeySelector", "A key of a ConfigMap.", default=False),
            "fieldRef": ref("ObjectFieldSelector", "A field of the pod, e.g. metadata.name or "
                            "status.podIP.", default=False),
            "fileKeyRef": ref("FileKeySelector", "A key in an env-style file on a volume.",
                              default=False),
            "resourceFieldRef": ref("ResourceFieldSelector", "A resource limit or request of a "
                                    "container.", default=False),
            "secretKeyRef": ref("SecretKeySelector", "A key of a Secret.", default=False),
        },
    ),
    "io.k8s.api.core.v1.ConfigMapKeySelector": obj(
        "Selects one key of a ConfigMap.",
        {
            "key": string("The key to read."),
            "name": string("Name of the ConfigMap."),
            "optional": boolean("Whether the ConfigMap or key may be missing."),
        },
        required=["key"],
    ),
    "io.k8s.api.core.v1.SecretKeySelector": obj(
        "Selects one key of a Secret.",
        {
            "key": string("The key to read."),
            "name": string("Name of the Secret."),
            "optional": boolean("Whether the Secret or key may be missing."),
        },
        required=["key"],
    ),
    "io.k8s.api.core.v1.FileKeySelector": obj(
        "Selects one key from an env-style file on a volume.",
        {
            "key": string("The key to read."),
            "optional": boolean("Whether the file or key may be missing."),
            "path": string("Path of the file inside the volume."),
            "volumeName": string("Name of the volume holding the file."),
        },
        required=["key", "path", "volumeName"],
    ),
    "io.k8s.api.core.v1.ObjectFieldSelector": obj(
        "Selects a field of the pod.",
        {
            "apiVersion": string("Version the field path is written in; default \"v1\"."),
            "fieldPath": string("Path of the field, e.g. metadata.namespace."),
        },
        required=["fieldPath"],
    ),
    "io.k8s.api.core.v1.ResourceFieldSelector": obj(
        "Selects a container resource (limits.cpu, requests.memory, ...).",
        {
            "containerName": string("Container to read; required for volumes."),
            "divisor": quantity("Unit the value is divided by, default 1."),
            "resource": string("The resource to read, e.g. limits.memory."),
        },
        required=["resource"],
    ),
    "io.k8s.api.core.v1.EnvFromSource": obj(
        "A ConfigMap or Secret whose keys become environment variables.",
        {
            "configMapRef": ref("ConfigMapEnvSource", "The ConfigMap to read.", default=False),
            "prefix": string("Prefix added to every key."),
            "secretRef": ref("SecretEnvSource", "The Secret to read.", default=False),
        },
    ),
    "io.k8s.api.core.v1.ConfigMapEnvSource": obj(
        "A ConfigMap used as a whole as environment.",
        {"name": string("Name of the ConfigMap."),
         "optional": boolean("Whether the ConfigMap may be missing.")},
    ),
    "io.k8s.api.core.v1.SecretEnvSource": obj(
        "A Secret used as a whole as environment.",
        {"name": string("Name of the Secret."), "optional": boolean("Whether the Secret may be missing.")},
    ),
    "io.k8s.api.core.v1.ResourceRequirements": obj(
        "Compute resources: what the scheduler reserves (requests) and the ceiling enforced at run "
        "time (limits).",
        {
            "claims": array("ResourceClaim", "Dynamic resource claims of the pod this container "
                            "uses.", list_type="map", map_keys=["name"]),
            "limits": quantity_map("Most of each resource the container may use, e.g. cpu: 500m, "
                                   "memory: 128Mi."),
            "requests": quantity_map("Amount of each resource reserved for the container; defaults "
                                     "to the limits when omitted."),
        },
    ),
    "io.k8s.api.core.v1.ResourceClaim": obj(
        "Names one resource claim of the pod.",
        {"name": string("Name of an entry in pod.spec.resourceClaims."),
         "request": string("One request inside that claim.")},
        required=["name"],
    ),
    "io.k8s.api.core.v1.ContainerResizePolicy": obj(
        "Resize behaviour for one resource.",
        {"resourceName": string("cpu or memory."),
         "restartPolicy": string("NotRequired or RestartContainer.")},
        required=["resourceName", "restartPolicy"],
    ),
    "io.k8s.api.core.v1.ContainerRestartRule": obj(
        "One rule deciding whether an exited container restarts.",
        {"action": string("What to do when the rule matches, e.g. Restart."),
         "exitCodes": ref("ContainerRestartRuleOnExitCodes", "Exit codes that trigger the rule.",
                          default=False)},
        required=["action"],
    ),
    "io.k8s.api.core.v1.ContainerRestartRuleOnExitCodes": obj(
        "A test on a container's exit code.",
        {"operator": string("In or NotIn."),
         "values": {"type": "array", "items": {"type": "integer", "format": "int32", "default": 0},
                    "x-kubernetes-list-type": "set", "description": "Exit codes compared against."}},
        required=["operator"],
    ),
    "io.k8s.api.core.v1.VolumeMount": obj(
        "Mounts a pod volume inside a container.",
        {
            "bindMountOptions": strings("Extra options for the bind mount.", list_type="atomic"),
            "mountPath": string("Path inside the container; must not contain ':'."),
            "mountPropagation": string("How mounts propagate between host and container: None, "
                                       "HostToContainer or Bidirectional."),
            "name": string("Name of a volume of the pod."),
            "readOnly": boolean("Mount read-only; default false."),
            "recursiveReadOnly": string("Whether read-only applies to sub-mounts too."),
            "subPath": string("Path inside the volume to mount instead of its root."),
            "subPathExpr": string("Like subPath, with $(VAR) expanded from the environment."),
        },
        required=["name", "mountPath"],
    ),
    "io.k8s.api.core.v1.VolumeDevice": obj(
        "Maps a raw block volume to a device path in the container.",
        {"devicePath": string("Device path inside the container."),
         "name": string("Name of a PersistentVolumeClaim volume of the pod.")},
        required=["name", "devicePath"],
    ),
    "io.k8s.api.core.v1.Probe": obj(
        "A periodic health check run against a container.",
        {
            **_HANDLER_FIELDS,
            "failureThreshold": int32("Consecutive failures after which the probe counts as failed; "
                                      "default 3."),
            "grpc": ref("GRPCAction", "Call the gRPC health service.", default=False),
            "initialDelaySeconds": int32("Seconds after start before the first probe."),
            "periodSeconds": int32("Seconds between probes; default 10."),
            "successThreshold": int32("Consecutive successes after a failure to count as healthy; "
                                      "default 1."),
            "terminationGracePeriodSeconds": int64("Grace period used when a failed probe kills the "
                                                   "container; overrides the pod's."),
            "timeoutSeconds": int32("Seconds before one probe times out; default 1."),
        },
    ),
    "io.k8s.api.core.v1.ExecAction": obj(
        "Runs a command in the container; exit status 0 means success.",
        {"command": strings("Command line, run directly (not in a shell).", list_type="atomic")},
    ),
    "io.k8s.api.core.v1.HTTPGetAction": obj(
        "An HTTP GET request; a 2xx or 3xx answer means success.",
        {
            "host": string("Host to connect to; the pod IP by default."),
            "httpHeaders": array("HTTPHeader", "Extra request headers.", list_type="atomic"),
            "path": string("Request path."),
            "port": int_or_string("Port number or container port name."),
            "protocol": string("Protocol version to speak."),
            "scheme": string("HTTP (default) or HTTPS.", enum=["HTTP", "HTTPS"]),
        },
        required=["port"],
    ),
    "io.k8s.api.core.v1.HTTPHeader": obj(
        "One HTTP header.",
        {"name": string("Header name."), "value": string("Header value.")},
        required=["name", "value"],
    ),
    "io.k8s.api.core.v1.TCPSocketAction": obj(
        "Opens a TCP connection; success if it connects.",
        {"host": string("Host to connect to; the pod IP by default."),
         "port": int_or_string("Port number or container port name.")},
        required=["port"],
    ),
    "io.k8s.api.core.v1.GRPCAction": obj(
        "Calls the standard gRPC health checking service.",
        {"mode": string("How the health service is called."),
         "port": int32("Port of the gRPC service."),
         "service": string("Service name sent in the health request.")},
        required=["port"],
    ),
    "io.k8s.api.core.v1.SleepAction": obj(
        "Waits a number of seconds.", {"seconds": int64("Seconds to sleep.")}, required=["seconds"],
    ),
    "io.k8s.api.core.v1.Lifecycle": obj(
        "Actions taken at container start and stop.",
        {
            "postStart": ref("LifecycleHandler", "Run right after the container is created; the "
                             "container is restarted if it fails.", default=False),
            "preStop": ref("LifecycleHandler", "Run before the container is stopped; counts against "
                           "the grace period.", default=False),
            "stopSignal": string("Signal sent to stop the container, e.g. SIGTERM."),
        },
    ),
    "io.k8s.api.core.v1.LifecycleHandler": obj(
        "One lifecycle action; exactly one field is set.",
        {**_HANDLER_FIELDS, "sleep": ref("SleepAction", "Wait for a while.", default=False)},
    ),
    "io.k8s.api.core.v1.SecurityContext": obj(
        "Security options of one container; fields set here win over the pod's securityContext.",
        {
            "allowPrivilegeEscalation": boolean("Whether a process may gain more privileges than "
                                                "its parent."),
            "appArmorProfile": ref("AppArmorProfile", "AppArmor profile to apply.", default=False),
            "capabilities": ref("Capabilities", "Linux capabilities to add or drop.", default=False),
            "privileged": boolean("Run as privileged: root on the host, in effect."),
            "procMount": string("Kind of /proc mount: Default or Unmasked."),
            "readOnlyRootFilesystem": boolean("Mount the root filesystem read-only."),
            "runAsGroup": int64("GID for the container process."),
            "runAsNonRoot": boolean("Refuse to start if the process would run as UID 0."),
            "runAsUser": int64("UID for the container process."),
            "seLinuxOptions": ref("SELinuxOptions", "SELinux context to apply.", default=False),
            "seccompProfile": ref("SeccompProfile", "Seccomp profile to apply.", default=False),
            "windowsOptions": ref("WindowsSecurityContextOptions", "Windows-specific settings.",
                                  default=False),
        },
    ),
    "io.k8s.api.core.v1.Capabilities": obj(
        "Linux capabilities added to or dropped from the default set.",
        {"add": strings("Capabilities to add, e.g. NET_ADMIN.", list_type="atomic"),
         "drop": strings("Capabilities to drop, e.g. ALL.", list_type="atomic")},
    ),
    "io.k8s.api.core.v1.SELinuxOptions": obj(
        "SELinux labels.",
        {"level": string("SELinux level."), "role": string("SELinux role."),
         "type": string("SELinux type."), "user": string("SELinux user.")},
    ),
    "io.k8s.api.core.v1.SeccompProfile": obj(
        "Which seccomp profile to use.",
        {"localhostProfile": string("Path of a profile on the node, for type Localhost."),
         "type": string("RuntimeDefault, Unconfined or Localhost.")},
        required=["type"],
    ),
    "io.k8s.api.core.v1.AppArmorProfile": obj(
        "Which AppArmor profile to use.",
        {"localhostProfile": string("Name of a profile loaded on the node, for type Localhost."),
         "type": string("RuntimeDefault, Unconfined or Localhost.")},
        required=["type"],
    ),
    "io.k8s.api.core.v1.WindowsSecurityContextOptions": obj(
        "Windows-specific security options.",
        {
            "gmsaCredentialSpec": string("Content of the GMSA credential spec."),
            "gmsaCredentialSpecName": string("Name of the GMSA credential spec to use."),
            "hostProcess": boolean("Run as a host process container."),
            "runAsUserName": string("Windows user name for the entrypoint."),
        },
    ),
}
