//! GPUDirect RDMA on GKE (A3 Ultra, A4: eight RoCE NICs per node), as Google's own manifests
//! write a pod for it (GoogleCloudPlatform/container-engine-accelerators,
//! `gpudirect-rdma/nccl-test.yaml`): the pod joins the cluster's `gvnic-1` and `rdma-0` …
//! `rdma-7` networks through GKE multi-networking annotations, mounts the gIB NCCL plugin and
//! the driver's libraries that the plugin's DaemonSet installs on the node, and sources the
//! plugin's NCCL settings before the job starts.

use k8s_openapi::api::core::v1::{EnvVar, HostPathVolumeSource, Volume, VolumeMount};
use std::collections::BTreeMap;

/// RDMA NICs (and networks `rdma-0` … `rdma-7`) of an A3 Ultra or A4 node.
pub const RDMA_NICS: u32 = 8;

/// What the cluster needs before these pods start.
pub const SETUP: &str = "GPUDirect RDMA on GKE: the pods join the networks gvnic-1 and rdma-0 to rdma-7 (GKE Network objects for the node pool's additional VPCs) and use the gIB NCCL plugin, which its installer DaemonSet puts on each node (container-engine-accelerators gpudirect-rdma/nccl-rdma-installer.yaml).";

const PLUGIN_HOST: &str = "/home/kubernetes/bin/gib";
const PLUGIN_PATH: &str = "/usr/local/gib";
const DRIVER_HOST: &str = "/home/kubernetes/bin/nvidia";
const DRIVER_PATH: &str = "/usr/local/nvidia";

/// The multi-networking annotations: eth0 the pod network, eth1 the second gVNIC, eth2–eth9
/// the RDMA NICs.
pub fn annotations() -> BTreeMap<String, String> {
    let mut interfaces = vec![
        serde_json::json!({"interfaceName": "eth0", "network": "default"}),
        serde_json::json!({"interfaceName": "eth1", "network": "gvnic-1"}),
    ];
    interfaces.extend(
        (0..RDMA_NICS)
            .map(|i| serde_json::json!({"interfaceName": format!("eth{}", i + 2), "network": format!("rdma-{i}")})),
    );
    BTreeMap::from([
        ("networking.gke.io/default-interface".to_string(), "eth0".to_string()),
        (
            "networking.gke.io/interfaces".to_string(),
            serde_json::Value::Array(interfaces).to_string(),
        ),
    ])
}

/// The node's plugin and driver folders.
pub fn volumes() -> Vec<Volume> {
    [("gib", PLUGIN_HOST), ("nvidia-libraries", DRIVER_HOST)]
        .into_iter()
        .map(|(name, path)| Volume {
            name: name.to_string(),
            host_path: Some(HostPathVolumeSource {
                path: path.to_string(),
                ..HostPathVolumeSource::default()
            }),
            ..Volume::default()
        })
        .collect()
}

pub fn mounts() -> Vec<VolumeMount> {
    [("gib", PLUGIN_PATH), ("nvidia-libraries", DRIVER_PATH)]
        .into_iter()
        .map(|(name, path)| VolumeMount {
            name: name.to_string(),
            mount_path: path.to_string(),
            ..VolumeMount::default()
        })
        .collect()
}

pub fn env() -> Vec<EnvVar> {
    vec![EnvVar {
        name: "LD_LIBRARY_PATH".to_string(),
        value: Some(format!("{DRIVER_PATH}/lib64")),
        ..EnvVar::default()
    }]
}

/// `command` run after the plugin's NCCL settings are sourced into its shell.
pub fn wrap(command: Vec<String>) -> Vec<String> {
    sourced(&format!("{PLUGIN_PATH}/scripts/set_nccl_env.sh"), &command)
}

/// `command` run by bash after `script` is sourced into the same shell.
pub(crate) fn sourced(script: &str, command: &[String]) -> Vec<String> {
    let quoted: Vec<String> = command.iter().map(|word| quote(word)).collect();
    vec![
        "/bin/bash".to_string(),
        "-c".to_string(),
        format!("source {script} && exec {}", quoted.join(" ")),
    ]
}

/// A word as bash reads it back unchanged: bare when it is plain, else in single quotes.
/// Kubernetes expands `$(VAR)` in the string before the shell sees it.
fn quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,@%+$()".contains(c));
    if plain && !word.contains("$(") {
        word.to_string()
    } else if plain {
        // `$(VAR)` is Kubernetes' and expanded already; quote it so bash takes it literally.
        format!("'{word}'")
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_runs_after_the_plugins_settings() {
        let wrapped = wrap(vec![
            "torchrun".into(),
            "--nnodes=$(NNODES)".into(),
            "train.py".into(),
            "it's".into(),
        ]);
        assert_eq!(wrapped[..2], ["/bin/bash", "-c"]);
        assert_eq!(
            wrapped[2],
            "source /usr/local/gib/scripts/set_nccl_env.sh && exec torchrun '--nnodes=$(NNODES)' train.py 'it'\\''s'"
        );
        let annotations = annotations();
        let interfaces: serde_json::Value = serde_json::from_str(&annotations["networking.gke.io/interfaces"]).unwrap();
        assert_eq!(interfaces.as_array().unwrap().len(), 10);
        assert_eq!(interfaces[9]["network"], "rdma-7");
    }
}
