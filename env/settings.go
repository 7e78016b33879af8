package env

// A GID index or CPU field's zero is its default, so a number as a user
// types it (a flag, a variable: 0 is GID 0, CPU 0, -1 none or the best)
// and the value of such a field are converted here, the one place that
// knows both.

// GIDSetting returns the GID index field that names table index index as
// typed: GIDIndex0 for 0, GIDBest for a negative one (-1, "the best").
func GIDSetting(index int) int {
	switch {
	case index == 0:
		return GIDIndex0
	case index < 0:
		return GIDBest
	}
	return index
}

// GIDIndexOf returns the table index a GID index field names, or GIDBest
// for the best (the field 0, GIDBest, or any other negative value).
func GIDIndexOf(setting int) int {
	switch {
	case setting == GIDIndex0:
		return 0
	case setting <= 0:
		return GIDBest
	}
	return setting
}

// CPUSetting returns the CPU field that pins to cpu as typed: CPU0 for 0,
// NoCPU for a negative one (not pinned).
func CPUSetting(cpu int) int {
	switch {
	case cpu == 0:
		return CPU0
	case cpu < 0:
		return NoCPU
	}
	return cpu
}

// CPUOf returns the CPU a CPU field names, def for the field 0 (its
// default), or NoCPU for not pinned.
func CPUOf(setting, def int) int {
	switch {
	case setting == 0:
		return def
	case setting == CPU0:
		return 0
	case setting < 0:
		return NoCPU
	}
	return setting
}

// CPUSettings is CPUSetting of each CPU of a pair, such as PinCPUs returns
// (rdmalat.LoopbackConfig.CPUs).
func CPUSettings(cpus [2]int) [2]int { return [2]int{CPUSetting(cpus[0]), CPUSetting(cpus[1])} }
