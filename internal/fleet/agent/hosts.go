package agent

import (
	"bufio"
	"fmt"
	"os"
	"strings"
)

// readHosts reads a file in /etc/hosts format ("address name [alias...]",
// # comments) into a map from name to address.
func readHosts(path string) (map[string]string, error) {
	hosts := map[string]string{}
	if path == "" {
		return hosts, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("-hosts: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		text, _, _ := strings.Cut(sc.Text(), "#")
		f := strings.Fields(text)
		if len(f) == 0 {
			continue
		}
		if len(f) < 2 {
			return nil, fmt.Errorf("%s:%d: %q: want \"address name...\" as in /etc/hosts", path, line, text)
		}
		for _, name := range f[1:] {
			hosts[name] = f[0]
		}
	}
	return hosts, sc.Err()
}
