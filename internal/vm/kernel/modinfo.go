package kernel

import (
	"bytes"
	"debug/elf"
	"fmt"
	"strings"
)

// A Modinfo is what a module file says about itself in its .modinfo
// section (what modinfo(8) prints).
type Modinfo struct {
	Name     string   // name=, "" in modules built before it existed
	Depends  []string // depends=: the modules it needs, by name
	Vermagic string   // vermagic=: the kernel release first, then build options
}

// Release is the kernel release the module was built for: the first word
// of its vermagic.
func (m Modinfo) Release() string {
	if f := strings.Fields(m.Vermagic); len(f) > 0 {
		return f[0]
	}
	return ""
}

// ReadModinfo reads the .modinfo section of the module file name.
func ReadModinfo(name string) (Modinfo, error) {
	f, err := elf.Open(name)
	if err != nil {
		return Modinfo{}, fmt.Errorf("%s: not a kernel module: %w", name, err)
	}
	defer f.Close()
	sec := f.Section(".modinfo")
	if sec == nil {
		return Modinfo{}, fmt.Errorf("%s: not a kernel module (no .modinfo section)", name)
	}
	b, err := sec.Data()
	if err != nil {
		return Modinfo{}, fmt.Errorf("%s: .modinfo: %w", name, err)
	}
	var m Modinfo
	for _, kv := range bytes.Split(b, []byte{0}) {
		k, v, ok := strings.Cut(string(kv), "=")
		if !ok {
			continue
		}
		switch k {
		case "name":
			m.Name = v
		case "vermagic":
			m.Vermagic = v
		case "depends":
			for _, d := range strings.Split(v, ",") {
				if d = strings.TrimSpace(d); d != "" {
					m.Depends = append(m.Depends, d)
				}
			}
		}
	}
	return m, nil
}
