# The fake adapter: each message's body runs in sh, in the workspace when there is one; its stdout
# is the reply. Test and scenario sessions use it where no model is wanted (seed 002's confined shell).
cd "$MOSAIC_WORKSPACE" 2>/dev/null
exec /bin/sh -c "$1"
