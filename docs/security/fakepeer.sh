#!/bin/sh
trap 'exit 0' INT TERM
echo "rdmapeer listening on $2"
while :; do sleep 0.2; done
