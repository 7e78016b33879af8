package work

// markReset zeroes the plugin's counts (a NOP without it).
func markReset()

// markReport makes the plugin write its counts (a NOP without it).
func markReport()

// markCloseAll closes every vCPU's windows (a NOP without the plugin).
func markCloseAll()

// markBit0 and markBit1 shift a bit into the value the plugin is being
// sent, markValue ends the value, markTable ends the table (roles.go).
func markBit0()
func markBit1()
func markValue()
func markTable()
