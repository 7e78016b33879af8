package env

// A GID index field's zero is its default, so a number as a user types it
// (a flag, a variable: 0 is GID 0, -1 the best) and the value of such a
// field are converted here, the one place that knows both.

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
