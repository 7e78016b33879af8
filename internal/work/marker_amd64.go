package work

// markReset zeroes the plugin's counts (a NOP without it).
func markReset()

// markReport makes the plugin write its counts (a NOP without it).
func markReport()

// markCloseAll closes every vCPU's windows (a NOP without the plugin).
func markCloseAll()
