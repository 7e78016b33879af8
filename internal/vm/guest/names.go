package guest

// Guest-side names shared by the host and the generated scripts.
const (
	OutDir        = "/rxevm/out"     // RXEVM_OUT in the guest
	ProgDir       = "/rxevm/prog"    // where PROGRAM is copied
	RunEnvPath    = "/rxevm/run.env" // per-run settings sourced by /init
	RunShellPath  = "/rxevm/run.sh"  // per-run script that execs PROGRAM
	OutTag        = "rxevmout"       // 9p mount tag of the -out share
	InsnsTag      = "rxevminsns"     // 9p mount tag of the instruction counts (read-only)
	InsnsDir      = "/rxevm/insns"   // where they are mounted
	InsnsFile     = InsnsDir + "/counts"
	SIWScriptPath = "/rxevm/siw.sh" // -siw: loads siw and adds siw0, siw1; sourced by /init
	AliveLine     = "rxevm-guest: init started"
	ReadyLine     = "rxevm-guest: ready"
	markerPrefix  = "\x1eRXEVM-EXIT-" // record separator, then the marker
	setupFailed   = "setup"           // marker status when /init's setup fails
	PATH          = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
)

// Guest-side names of multi-node mode.
const (
	NodeEnvPath = "/rxevm/node.env"    // per-node settings sourced by /init
	NodeCmdPath = "/rxevm/node-cmd.sh" // -node-cmd, run on nodes 2..N
	ctlDir      = "/rxevm/ctl"         // 9p share with the host: the start signal
	CtlTag      = "rxevmctl"
	GoFile      = "go"      // created in the control share once every node is ready
	fleetNet    = "10.77.0" // node K is 10.77.0.K/24 on eth0
	SlurmDir    = "/etc/slurm"
)

// marker returns the end-of-run marker that precedes the exit status on the
// program's output port. The nonce keeps a program from forging it.
func marker(nonce string) string {
	return markerPrefix + nonce + ": "
}
