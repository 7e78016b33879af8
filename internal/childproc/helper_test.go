package childproc

import (
	"fmt"
	"os/exec"
	"time"
)

// helperEnv makes the test binary the parent of TestTieDiesWithParent:
// it starts a tied sleep, prints its pid and waits to be killed.
const helperEnv = "CHILDPROC_TEST_PARENT"

func helperParent() int {
	cmd := exec.Command("sleep", "60")
	Tie(cmd)
	if err := cmd.Start(); err != nil {
		fmt.Println(err)
		return 1
	}
	fmt.Println(cmd.Process.Pid)
	time.Sleep(time.Minute)
	return 0
}
