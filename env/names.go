package env

// Names of the environment variables.
const (
	VarDevice     = "RDMABENCH_DEVICE"
	VarPort       = "RDMABENCH_PORT"
	VarGIDIndex   = "RDMABENCH_GID_INDEX"
	VarPeerDevice = "RDMABENCH_PEER_DEVICE"
	VarPeer       = "RDMABENCH_PEER"
	VarPeerToken  = "RDMABENCH_PEER_TOKEN"
	VarRequire    = "RDMABENCH_REQUIRE"
	VarCPUs       = "RDMABENCH_CPUS"
	VarWarmup     = "RDMABENCH_WARMUP"
	VarSizes      = "RDMABENCH_SIZES"
	VarInline     = "RDMABENCH_INLINE"
	VarMTU        = "RDMABENCH_MTU"
	VarTimeout    = "RDMABENCH_TIMEOUT"
	VarSamplesDir = "RDMABENCH_SAMPLES_DIR"
	VarMaxSamples = "RDMABENCH_MAX_SAMPLES"
	VarTransport  = "RDMABENCH_TRANSPORT"
	VarEvents     = "RDMABENCH_EVENTS"
	VarCM         = "RDMABENCH_CM"
	VarPMQoS      = "RDMABENCH_PMQOS"
	VarTClass     = "RDMABENCH_TCLASS"
	VarFlowLabel  = "RDMABENCH_FLOW_LABEL"
	VarSL         = "RDMABENCH_SL"
	VarPKeyIndex  = "RDMABENCH_PKEY_INDEX"
	VarCounters   = "RDMABENCH_COUNTERS"
	VarMax        = "RDMABENCH_MAX"
	VarGap        = "RDMABENCH_GAP"
	VarHugePages  = "RDMABENCH_HUGEPAGES"
	VarODP        = "RDMABENCH_ODP"
	VarLoad       = "RDMABENCH_LOAD"
	VarNUMA       = "RDMABENCH_NUMA"
	VarVM         = "RDMABENCH_VM"
	// Set by rdmaab for a benchmark process it conducts in a duet.
	VarTurnFD = "RDMABENCH_TURN_FD"

	// Set by cmd/rxevm for the guest, read by hostinfo.
	VarHostCPUContention = "RDMABENCH_HOST_CPU_CONTENTION"
	// Read by cmd/rxevm on the host.
	VarVMCache = "RDMABENCH_VM_CACHE"

	// Gates of the slow tests that boot VMs.
	VarVMTest    = "RDMABENCH_VM_TEST"
	VarFleetTest = "RDMABENCH_FLEET_TEST"
	VarChromium  = "RDMABENCH_CHROMIUM"
	VarFleetOut  = "RDMABENCH_FLEET_OUT"
	// Read by cmd/rdmafleet/rdmafleet.sbatch.
	VarFleetBin = "RDMABENCH_FLEET_BIN"
	VarFleetDir = "RDMABENCH_FLEET_DIR"
	// Set by rdmafleet run for its agents, through srun's environment.
	VarFleetToken = "RDMABENCH_FLEET_TOKEN"
)

// A variable is one environment variable as the reference documents it.
type variable struct {
	Name    string
	Default string // what an unset variable means
	Doc     string // what it does and what values it takes
}

// variables lists every RDMABENCH_ variable, in the order
// docs/variables.md documents them.
var variables = []variable{
	{VarDevice, "the first device with an active port", `RDMA device to use, e.g. mlx5_0 or rxe0; several, one per rail, as a list such as "mlx5_0,mlx5_1" or "all" (every device with an active port): the benchmarks then measure each rail in turn, named in a /rail=DEV level of their names (one device: names as before), and the tests take the first. In two-node mode each rail meets rdmapeer's device of the same name (rdmapeer -device serves several), or RDMABENCH_PEER_DEVICE's.`},
	{VarPort, "the device's first active port", "port number on that device."},
	{VarGIDIndex, "the best GID of the whole table, chosen like perftest: IPv4 first, then not link-local, then RoCE v2", "GID table index (RoCE)."},
	{VarPeerDevice, "loopback: the same device; two-node: rdmapeer's first, or with rails the device of the same name", "the device of the other side. Loopback: the responding endpoint's; naming a second device makes traffic cross the wire (in the VM, rxe1 -> rxe0 crosses a veth). Two-node: one of the devices rdmapeer serves (rdmapeer -device mlx5_0,mlx5_1), which refuses any other, listing its own. With rails, unset, each rail meets the peer's device of its own name (pairing by name); a list of one per rail pairs them by position instead: rail i meets device i (RDMABENCH_DEVICE=mlx5_0,mlx5_1 RDMABENCH_PEER_DEVICE=mlx5_2,mlx5_3 pairs mlx5_0 with mlx5_2; mlx5_1,mlx5_0 crosses them). A list is refused with RDMABENCH_DEVICE=all, whose order the host decides: name the rails there."},
	{VarPeer, "loopback: both endpoints in this process", "host:port of an rdmapeer (cmd/rdmapeer), or a bare host for port 18515: two-node mode."},
	{VarPeerToken, "none", "the shared secret of an rdmapeer started with -token: the client answers the peer's challenge with it; it is never sent or printed."},
	{VarRequire, "0", "1: a missing or unusable device fails tests instead of skipping them. Set in the VM and in CI."},
	{VarCPUs, "the last two CPUs this process may run on; on a host with several NUMA nodes the last two of the RDMA device's node (RDMABENCH_NUMA)", `CPUs to pin to: "A,B" pins the initiator to A and the loopback responder to B; "A" pins the initiator only; "none" disables pinning. CPUs the kernel isolates (isolcpus=) may be named although no inherited affinity mask has them.`},
	{VarWarmup, "1000", "round trips run before measuring and left out of every statistic."},
	{VarSizes, "2,64,4096,65536", `message sizes in bytes, comma-separated (suffixes K and M allowed), each once, or "all" for every power of two from 2 to 8 MiB (perftest -a).`},
	{VarInline, "perftest's for the operation on this device (ConnectX: 220 write, 236 send, 188 send over UD; bnxt_re 96, EFA 32, irdma 101; none on devices perftest does not recognise, rxe included; none for READ and atomics), at most the device's limit", `largest message sent inline; 0 disables inline; "device" takes the device's limit.`},
	{VarMTU, "the port's active MTU", "path MTU in bytes: 256, 512, 1024, 2048 or 4096."},
	{VarTimeout, "5s", "how long any wait on the peer or on a completion may last before failing, as a Go duration, at least 10ms."},
	{VarSamplesDir, "none", "write every raw sample, in order, to a file per benchmark in this directory (perftest -U)."},
	{VarMaxSamples, "10000000", "the most raw samples written per run (one size, one -count repetition) to the samples file or artifacts; 0 writes none. The histogram and statistics keep every sample."},
	{VarTransport, "rc", "queue pair type: rc, uc or ud. A benchmark whose operation the transport cannot carry (READ over UC, WRITE over UD) is skipped with the reason."},
	{VarEvents, "0", "1: wait for completions on completion channels (perftest -e) instead of busy-polling; every operation but plain RDMA WRITE, which is skipped."},
	{VarCM, "0", "1: connect the queue pairs through rdma_cm (perftest -R) instead of exchanging QP numbers over the TCP connection (two-node) or in memory (loopback); RC and UD only."},
	{VarPMQoS, "0", "1: hold /dev/cpu_dma_latency at 0 while a benchmark's pair is open (no deep idle states on any CPU; needs root); a limit such as 20us holds that (whole microseconds, up to 35m47s). Recorded as pm-qos."},
	{VarTClass, "0", "traffic class of every packet's GRH (perftest --tclass), 0 to 255: on RoCE v2 the IP header's TOS byte, DSCP times 4 plus the ECN bits (96 is DSCP 24). For every transport and rdma_cm (rdma_set_option TOS). Recorded as rdma-tclass when set."},
	{VarFlowLabel, "0", "flow label of every packet's GRH (perftest --flow_label), 0 to 1048575: on RoCE v2 over IPv6 the IPv6 flow label (a GID index of an IPv6 GID); refused with RDMABENCH_CM=1 (rdma_cm takes its route's). Recorded as rdma-flow-label when set."},
	{VarSL, "0", "service level (perftest --sl), 0 to 15: InfiniBand's virtual lane mapping; on RoCE what the driver maps to a priority. Refused with RDMABENCH_CM=1 (rdma_cm takes its route's). Recorded as rdma-sl when set."},
	{VarPKeyIndex, "0", "index in the port's P_Key table (perftest --pkey_index), 0 to 65535, set at INIT on both sides; refused with RDMABENCH_CM=1 (rdma_cm takes its address's). Recorded as rdma-pkey-index when set."},
	{VarCounters, "0", "1: read the initiator's port counters and hw_counters (/sys/class/infiniband/DEV/ports/N/) before and after each measured run and report each one that rose as a metric per operation, such as hw.rcvd_seq_err/op (perftest -W); a counter absent from a result did not change. Recorded as rdma-counters."},
	{VarMax, "none", `absolute limits that fail a benchmark whose run is above them, beside the relative gate: comma-separated stat=duration pairs such as "p99=20us,p50=5us" (statistics min, mean, max, p50, p90, p99, p99.9, p99.99), compared with the reported figure (one-way for ping-pong, whole for READ and atomics); a percentile with too few samples is taken as the maximum. Recorded as rdmabench-max.`},
	{VarGap, "0 (back to back)", "idle time before each round trip of the initiator (perftest --latency_gap), as a Go duration such as 10us, up to 1s and shorter than RDMABENCH_TIMEOUT: latency after an idle, as applications see it. The initiator spins on the clock for the gap (as perftest does) and starts each sample after it, so unlike perftest's the figures hold no gap. Recorded as rdmabench-gap when set."},
	{VarLoad, "0 (none)", "a message size such as 64K: while latency is measured, a bandwidth stream of RDMA WRITEs of that size (16 in flight) runs on the same device from a queue pair of its own, on a CPU the measuring threads do not use when there is one (SuperBench's congestors); its throughput over each run is reported beside the latency as load-MB/s. In loopback mode the stream's target is a second queue pair of this process; in two-node mode it is a load session of rdmapeer on the peer's device (a second connection: it takes a session slot and registered memory there, but no answering CPU, and is renewed at each run). A NIC's port is shared by both flows; rxe does a queue pair's protocol work in the posting thread's own system call, so on rxe the stream moves latency only where the two flows share receive work on one CPU (TestLoad steers the VM's veth receive queues to one CPU for that). Recorded as rdmabench-load when set. In fleet mode (rdmafleet run, which refuses a bad value before anything runs) every pair's benchmark streams into its own rdmapeer's second session; the job's rdmabench-load line labels every pair file and matrix.txt, which shows load-MB/s in a table of its own, and outliers.txt says the job ran under load: the load is never judged nor held to -max (docs/fleet.md)."},
	{VarHugePages, "0", "1: back both sides' registered buffers with reserved huge pages (perftest --use_hugepages): mmap MAP_HUGETLB of the default huge page size; refused with what to do when the host has none free (vm.nr_hugepages). thp: transparent huge pages instead, no reservation: mappings aligned to the PMD huge page size, madvise MADV_HUGEPAGE before the first touch; refused when /sys/kernel/mm/transparent_hugepage/enabled is never or when the kernel backs a buffer with fewer huge pages than asked (AnonHugePages in smaps). Recorded as rdmabench-hugepages (on or thp) when set."},
	{VarODP, "0", "1: register both sides' buffers with on-demand paging (perftest --odp, IBV_ACCESS_ON_DEMAND), no pinning; refused with the reason where the device does not report ODP for the transport and operation (ibv_query_device_ex odp_caps; rxe has none on either kernel Debian bookworm ships, 6.1 (the VM's) and 6.12 (its rdma_rxe.ko holds no ODP code): rxe's ODP series, \"RDMA/rxe: Allow registering MRs for On-Demand Paging\", came after 6.12). Recorded as rdmabench-odp when set."},
	{VarNUMA, "device", `NUMA placement on a host with several nodes: "device" puts the busy-polling threads (the CPUs RDMABENCH_CPUS does not name) and the registered buffers on the RDMA device's node (a software device's netdev's), as perftest does; a node number puts them on that node; "off" takes the last two allowed CPUs and leaves memory to the kernel. Nothing changes on a one-node host. Recorded as rdmabench-numa-node when it places; CPUs named on another node get a "numa" warning.`},
	{VarVM, "unset", "set to 1 by cmd/rxevm inside the soft-RoCE VM; 0 or 1 (true and false too), any other value is refused."},
	{VarTurnFD, "unset", "set by rdmaab for the benchmark processes of a duet: the inherited file descriptor of the conductor's socket; each run then takes turns of a burst of round trips with the other side's process. A descriptor that is not a unix stream socket is refused, and left open."},
	{VarHostCPUContention, "unset", "set by cmd/rxevm inside the VM: how much the host's CPUs slowed each other when measured before the boot; reported as a note."},
	{VarVMCache, "rdmabench/rxevm under the user cache directory", "where cmd/rxevm keeps the Debian packages and the extracted guest."},
	{VarVMTest, "unset", "1: run the tests that boot the VM themselves: internal/vm's TestVM and cmd/rdmaab's TestOwnProject (make test-own)."},
	{VarChromium, "unset", "1: the results page's render test in headless Chromium must run (fails when /usr/bin/chromium is missing instead of skipping). Set in CI."},
	{VarFleetTest, "unset", "1: run internal/fleettest, which boots several VMs (make test-fleet)."},
	{VarFleetOut, "a temporary directory", "where internal/fleettest keeps what the VMs write."},
	{VarFleetBin, "$SLURM_SUBMIT_DIR/bin", "rdmafleet.sbatch: where rdmafleet, rdmapeer and rdmabench.test are, the same path on every node."},
	{VarFleetToken, "a fresh random token per job", "set by rdmafleet run for its agents through srun's environment (keep srun --export at ALL): every control message of a pair carries a MAC under it, so a stranger on the control port cannot start or end a pair."},
	{VarFleetDir, "./rdmafleet-$SLURM_JOB_ID", "rdmafleet.sbatch: the job directory, shared by all nodes."},
}
