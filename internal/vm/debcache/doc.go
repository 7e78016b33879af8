// Package debcache keeps the Debian packages rxevm builds its guest from:
// a cache directory it owns (a marker file, an flock, pruning of only the
// names it makes) and apt's answers (candidate versions, downloads,
// extraction with dpkg). What goes into the guest is decided elsewhere
// (internal/vm/image).
package debcache
