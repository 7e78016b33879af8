// Package guest is both ends of the protocol between rxevm and its guest:
// the /init scripts the guest runs (soft-RoCE setup, the program, the exit
// marker), the program's environment, and the host side that reads the two
// serial ports back: the program's output up to the end-of-run marker, and
// the console with its sign-of-life and ready lines.
package guest
