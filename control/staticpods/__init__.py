"""Static pods: the control plane's components run from manifest files in the data folder (as
kubeadm's `/etc/kubernetes/manifests`), each shown in `kube-system` as the kubelet's mirror pod.

`manifests` reads and judges the files (pure), `mirror` builds the mirror pods (pure), `runner`
is the control-plane node's kubelet for them: it tells runcluster's supervisor what to run and
keeps the mirror pods in the hub.
"""
