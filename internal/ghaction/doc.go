// Package ghaction holds the tests of the GitHub Action in
// .github/actions/rdmabench (a composite action and its script,
// rdmabench-ci.sh): actionlint on a workflow that uses it, and the script
// run on this host with a fake GITHUB_* environment, the steps that need a
// runner (apt-get, udevadm, the VM) stubbed. It has no code of its own.
package ghaction
