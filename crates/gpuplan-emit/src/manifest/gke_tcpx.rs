//! GPUDirect-TCPX (GKE A3 High, four GPU NICs) and GPUDirect-TCPXO (A3 Mega, eight), as
//! Google's own manifests write a pod for them (GoogleCloudPlatform/container-engine-accelerators
//! @ 992db81, `gpudirect-tcpx/nccl-test-latest.yaml` and `gpudirect-tcpxo/nccl-test-latest.yaml`):
//! the pod joins the node pool's GPU networks `vpc1` … through GKE multi-networking annotations;
//! a receive-data-path daemon runs beside the trainer in the same network namespace, with the
//! GPUs injected by the NRI device injector; the trainer loads the NCCL plugin that the
//! installer DaemonSet puts in the node's driver folder. The daemon runs as a native sidecar
//! (an init container that keeps running), as `gpudirect-tcpxo/best-practice.md` advises, so
//! that a Job completes when its trainer does.

use k8s_openapi::api::core::v1::{
    Capabilities, Container, EnvVar, HostPathVolumeSource, ResourceRequirements, SecurityContext, Volume, VolumeMount,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use std::collections::BTreeMap;

/// Which of GKE's two GPUDirect-over-TCP data paths a node has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GpuDirectTcp {
    /// A3 High (a3-highgpu-8g): four GPU NICs.
    Tcpx,
    /// A3 Mega (a3-megagpu-8g): eight GPU NICs and the FasTrak NCCL plugin.
    Tcpxo,
}

/// The node's driver folder, where the plugin installer copies NCCL and its plugin.
const LIBRARIES_HOST: &str = "/home/kubernetes/bin/nvidia/lib64";
const LIBRARIES: &str = "/usr/local/nvidia/lib64";
/// TCPX: the daemon's Unix-socket folder, shared with the trainer.
const TCPX_SOCKETS: &str = "/run/tcpx";
/// TCPXO: the LLCM devices the installer binds on the node.
const APERTURE: &str = "/dev/aperture_devices";

impl GpuDirectTcp {
    /// GPU NICs per node, each on its own network `vpc1` … `vpcN`.
    pub fn nics(self) -> u32 {
        match self {
            GpuDirectTcp::Tcpx => 4,
            GpuDirectTcp::Tcpxo => 8,
        }
    }

    fn daemon(self) -> &'static str {
        match self {
            GpuDirectTcp::Tcpx => "tcpx-daemon",
            GpuDirectTcp::Tcpxo => "tcpxo-daemon",
        }
    }

    /// What the cluster needs before these pods start.
    pub fn setup(self) -> &'static str {
        match self {
            GpuDirectTcp::Tcpx => {
                "GPUDirect-TCPX on GKE (A3 High): the pods join the networks vpc1 to vpc4 (GKE Network objects for the node pool's four additional GPU NICs, on a cluster with multi-networking); the GPUDirect-TCPX NCCL plugin comes from its installer DaemonSet (container-engine-accelerators gpudirect-tcpx/nccl-tcpx-installer.yaml) and the daemon's GPUs from the NRI device injector (nri_device_injector/nri-device-injector.yaml)."
            }
            GpuDirectTcp::Tcpxo => {
                "GPUDirect-TCPXO on GKE (A3 Mega): the pods join the networks vpc1 to vpc8 (GKE Network objects for the node pool's eight additional GPU NICs, on a cluster with multi-networking); the FasTrak NCCL plugin and /dev/aperture_devices come from its installer DaemonSet (container-engine-accelerators gpudirect-tcpxo/nccl-tcpxo-installer.yaml) and the daemon's GPUs from the NRI device injector (nri_device_injector/nri-device-injector.yaml)."
            }
        }
    }

    /// The multi-networking annotations (eth0 the pod network, eth1 … the GPU NICs) and the
    /// devices the injector hands the daemon.
    pub fn annotations(self) -> BTreeMap<String, String> {
        let mut interfaces = vec![serde_json::json!({"interfaceName": "eth0", "network": "default"})];
        interfaces.extend(
            (1..=self.nics())
                .map(|i| serde_json::json!({"interfaceName": format!("eth{i}"), "network": format!("vpc{i}")})),
        );
        let mut devices: Vec<String> = (0..8).map(|i| format!("/dev/nvidia{i}")).collect();
        devices.extend(["/dev/nvidiactl".to_string(), "/dev/nvidia-uvm".to_string()]);
        if self == GpuDirectTcp::Tcpxo {
            devices.push("/dev/dmabuf_import_helper".to_string());
        }
        let device_list: String = devices.iter().map(|d| format!("- path: {d}\n")).collect();
        BTreeMap::from([
            ("networking.gke.io/default-interface".to_string(), "eth0".to_string()),
            (
                "networking.gke.io/interfaces".to_string(),
                serde_json::Value::Array(interfaces).to_string(),
            ),
            (format!("devices.gke.io/container.{}", self.daemon()), device_list),
        ])
    }

    /// The node folders the daemon and the trainer share.
    pub fn volumes(self) -> Vec<Volume> {
        let mut folders = vec![
            ("tcp-libraries", LIBRARIES_HOST),
            ("tcp-sys", "/sys"),
            ("tcp-proc-sys", "/proc/sys"),
        ];
        folders.push(match self {
            GpuDirectTcp::Tcpx => ("tcpx-socket", TCPX_SOCKETS),
            GpuDirectTcp::Tcpxo => ("aperture-devices", APERTURE),
        });
        folders
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

    /// The trainer's mounts: the plugin's libraries, and the daemon's sockets (TCPX) or the
    /// LLCM devices (TCPXO).
    pub fn mounts(self) -> Vec<VolumeMount> {
        let own = match self {
            GpuDirectTcp::Tcpx => ("tcpx-socket", TCPX_SOCKETS),
            GpuDirectTcp::Tcpxo => ("aperture-devices", APERTURE),
        };
        [("tcp-libraries", LIBRARIES), own]
            .into_iter()
            .map(|(name, path)| mount(name, path))
            .collect()
    }

    /// The trainer's environment. TCPX: the NCCL settings of Google's run-nccl.sh for
    /// a3-highgpu-8g (its NIC and CPU bindings), the daemon's sockets where they are mounted.
    /// TCPXO: where the plugin is, for its settings script (see [`GpuDirectTcp::wrap`]).
    pub fn env(self) -> Vec<EnvVar> {
        let mut pairs = vec![("LD_LIBRARY_PATH", LIBRARIES)];
        match self {
            GpuDirectTcp::Tcpx => pairs.extend(TCPX_NCCL),
            GpuDirectTcp::Tcpxo => pairs.extend([
                ("NCCL_LIB_DIR", LIBRARIES),
                ("NCCL_FASTRAK_LLCM_DEVICE_DIRECTORY", APERTURE),
            ]),
        }
        pairs
            .into_iter()
            .map(|(name, value)| EnvVar {
                name: name.to_string(),
                value: Some(value.to_string()),
                ..EnvVar::default()
            })
            .collect()
    }

    /// `command` as the trainer runs it: TCPXO sources the plugin's NCCL profile first.
    pub fn wrap(self, command: Vec<String>) -> Vec<String> {
        match self {
            GpuDirectTcp::Tcpx => command,
            GpuDirectTcp::Tcpxo => super::gke_rdma::sourced(&format!("{LIBRARIES}/nccl-env-profile.sh"), &command),
        }
    }

    /// Whether the trainer must pin memory (IPC_LOCK): Google's TCPX pod adds it, TCPXO's not.
    pub fn pins_memory(self) -> bool {
        self == GpuDirectTcp::Tcpx
    }

    /// The receive-data-path daemon, as a native sidecar, with the resources GKE Autopilot's
    /// sample gives it and only the capabilities Google's unprivileged sample adds.
    pub fn sidecar(self) -> Container {
        let (image, command, capabilities) = match self {
            GpuDirectTcp::Tcpx => (
                "us-docker.pkg.dev/gce-ai-infra/gpudirect-tcpx/tcpgpudmarxd-dev:v2.0.12",
                vec![
                    "/tcpgpudmarxd/build/app/tcpgpudmarxd",
                    "--gpu_nic_preset",
                    "a3vm",
                    "--gpu_shmem_type",
                    "fd",
                    "--uds_path",
                    TCPX_SOCKETS,
                    "--setup_param",
                    // In quotes, as Google's sample passes it.
                    "\"--verbose 128 2 0 \"",
                ],
                vec!["NET_ADMIN"],
            ),
            GpuDirectTcp::Tcpxo => (
                "us-docker.pkg.dev/gce-ai-infra/gpudirect-tcpxo/tcpgpudmarxd-dev:v1.0.21",
                vec!["/fts/entrypoint_rxdm_container.sh", "--num_hops=2"],
                vec!["NET_ADMIN", "NET_BIND_SERVICE"],
            ),
        };
        let mut mounts = vec![
            mount("tcp-libraries", LIBRARIES),
            mount("tcp-sys", "/hostsysfs"),
            mount("tcp-proc-sys", "/hostprocsysfs"),
        ];
        if self == GpuDirectTcp::Tcpx {
            mounts.push(mount("tcpx-socket", TCPX_SOCKETS));
        }
        let amounts = BTreeMap::from([
            ("cpu".to_string(), Quantity("1".to_string())),
            ("memory".to_string(), Quantity("2Gi".to_string())),
        ]);
        Container {
            name: self.daemon().to_string(),
            image: Some(image.to_string()),
            command: Some(command.into_iter().map(str::to_string).collect()),
            env: Some(vec![EnvVar {
                name: "LD_LIBRARY_PATH".to_string(),
                value: Some(LIBRARIES.to_string()),
                ..EnvVar::default()
            }]),
            restart_policy: Some("Always".to_string()),
            resources: Some(ResourceRequirements {
                limits: Some(amounts.clone()),
                requests: Some(amounts),
                ..ResourceRequirements::default()
            }),
            security_context: Some(SecurityContext {
                capabilities: Some(Capabilities {
                    add: Some(capabilities.into_iter().map(str::to_string).collect()),
                    ..Capabilities::default()
                }),
                ..SecurityContext::default()
            }),
            volume_mounts: Some(mounts),
            ..Container::default()
        }
    }
}

/// NCCL's settings for GPUDirect-TCPX on a3-highgpu-8g, as container-engine-accelerators
/// `gpudirect-tcpx/nccl-config.yaml` (run-nccl.sh, "Finalize NCCL config for GKE 1.34+") sets
/// them; the socket prefix where these pods mount the daemon's sockets.
const TCPX_NCCL: [(&str, &str); 18] = [
    ("NCCL_SOCKET_IFNAME", "eth0"),
    ("NCCL_ALGO", "Ring,Tree"),
    ("NCCL_PROTO", "Simple"),
    ("NCCL_CROSS_NIC", "0"),
    ("NCCL_NET_GDR_LEVEL", "PIX"),
    ("NCCL_P2P_PXN_LEVEL", "0"),
    ("NCCL_GPUDIRECTTCPX_SOCKET_IFNAME", "eth1,eth2,eth3,eth4"),
    ("NCCL_GPUDIRECTTCPX_CTRL_DEV", "eth0"),
    ("NCCL_DYNAMIC_CHUNK_SIZE", "524288"),
    ("NCCL_P2P_NET_CHUNKSIZE", "524288"),
    ("NCCL_P2P_PCI_CHUNKSIZE", "524288"),
    ("NCCL_P2P_NVL_CHUNKSIZE", "1048576"),
    ("NCCL_BUFFSIZE", "4194304"),
    ("NCCL_NSOCKS_PERTHREAD", "4"),
    ("NCCL_SOCKET_NTHREADS", "1"),
    (
        "NCCL_GPUDIRECTTCPX_TX_BINDINGS",
        "eth1:8-21,112-125;eth2:8-21,112-125;eth3:60-73,164-177;eth4:60-73,164-177",
    ),
    (
        "NCCL_GPUDIRECTTCPX_RX_BINDINGS",
        "eth1:22-35,126-139;eth2:22-35,126-139;eth3:74-87,178-191;eth4:74-87,178-191",
    ),
    ("NCCL_GPUDIRECTTCPX_UNIX_CLIENT_PREFIX", TCPX_SOCKETS),
];

fn mount(name: &str, path: &str) -> VolumeMount {
    VolumeMount {
        name: name.to_string(),
        mount_path: path.to_string(),
        ..VolumeMount::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_data_path_joins_its_own_nics_and_names_its_daemon() {
        for (path, nics, daemon) in [
            (GpuDirectTcp::Tcpx, 4, "tcpx-daemon"),
            (GpuDirectTcp::Tcpxo, 8, "tcpxo-daemon"),
        ] {
            let annotations = path.annotations();
            let interfaces: serde_json::Value =
                serde_json::from_str(&annotations["networking.gke.io/interfaces"]).unwrap();
            assert_eq!(interfaces.as_array().unwrap().len(), nics + 1);
            assert_eq!(interfaces[nics]["network"], format!("vpc{nics}"));
            assert!(annotations[&format!("devices.gke.io/container.{daemon}")].contains("/dev/nvidia7"));
            let sidecar = path.sidecar();
            assert_eq!(sidecar.name, daemon);
            assert_eq!(sidecar.restart_policy.as_deref(), Some("Always"));
            // Every folder a container mounts is one of the pod's volumes.
            let volumes: Vec<String> = path.volumes().into_iter().map(|v| v.name).collect();
            for m in path.mounts().iter().chain(sidecar.volume_mounts.iter().flatten()) {
                assert!(volumes.contains(&m.name), "{}", m.name);
            }
        }
        let wrapped = GpuDirectTcp::Tcpxo.wrap(vec!["torchrun".into(), "train.py".into()]);
        assert_eq!(
            wrapped[2],
            "source /usr/local/nvidia/lib64/nccl-env-profile.sh && exec torchrun train.py"
        );
        assert_eq!(GpuDirectTcp::Tcpx.wrap(vec!["torchrun".into()]), ["torchrun"]);
    }
}
