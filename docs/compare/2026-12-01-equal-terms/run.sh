#!/bin/sh
O=${RXEVM_OUT:-/tmp}
B=bin
uptime
$B/rdmacompare -bench $B/benchA.test -tools write,send -sizes 2 -rounds 6 -out $O/A-pingpong > $O/A-pingpong.txt 2>&1
$B/rdmacompare -bench $B/benchB.test -tools write,send -sizes 2 -rounds 6 -out $O/B-pingpong > $O/B-pingpong.txt 2>&1
$B/rdmacompare -bench $B/benchB.test -tools read -sizes 2 -rounds 6 -pin=false -out $O/B-read-unpinned > $O/B-read-unpinned.txt 2>&1
$B/rdmacompare -bench $B/benchB.test -tools read -sizes 2 -rounds 6 -out $O/B-read-pinned > $O/B-read-pinned.txt 2>&1
uptime
