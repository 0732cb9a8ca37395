#!/usr/bin/env bash
# The DevBox container's entrypoint: clones the run's repository through the runtime's hub (git
# smart HTTP, authenticated by this DevBox's own hub token; the hub alone holds the GitHub token),
# then becomes the DevBox agent (`clustercode devbox`).
# A warm task (CLUSTERCODE_WARM_ID set) has no DevBox yet: it clones the default branch with its
# single-use warm token (read-only), and its agent sets up and waits for a claim from the hub.
set -euo pipefail

: "${CLUSTERCODE_API_URL:?is not set}"
: "${CLUSTERCODE_REPOSITORY:?is not set}"
if [[ -n "${CLUSTERCODE_WARM_ID:-}" ]]; then
  : "${CLUSTERCODE_WARM_TOKEN:?is not set}"
  : "${CLUSTERCODE_WARM_BRANCH:?is not set}"
  token="$CLUSTERCODE_WARM_TOKEN"
  unset CLUSTERCODE_WARM_TOKEN
  identity=(--warm "$CLUSTERCODE_WARM_ID")
  branch=(--branch "$CLUSTERCODE_WARM_BRANCH")
else
  : "${CLUSTERCODE_DEVBOX_ID:?is not set}"
  : "${CLUSTERCODE_DEVBOX_TOKEN:?is not set}"
  # The agent reads its token on stdin: it is not in the environment commands could find.
  token="$CLUSTERCODE_DEVBOX_TOKEN"
  unset CLUSTERCODE_DEVBOX_TOKEN
  identity=(--devbox "$CLUSTERCODE_DEVBOX_ID")
  branch=()
fi

workspace="${CLUSTERCODE_WORKSPACE:-$HOME/workspace}"

rm -rf "$workspace"
# The hub token goes to this one git process's environment: never argv, never a file.
GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=http.extraHeader \
  GIT_CONFIG_VALUE_0="Authorization: Bearer ${token}" \
  git clone --quiet "${branch[@]}" -- "$CLUSTERCODE_REPOSITORY" "$workspace"
cd "$workspace"
# Started as root (with a `runner` user), the agent runs each command as runner, with no
# capabilities and no way to gain any, so no command can read the agent's /proc entries.
if [[ "$(id -u)" == 0 ]] && id runner >/dev/null 2>&1; then
  chown -R runner:runner "$workspace"
  export CLUSTERCODE_COMMAND_SANDBOX=setpriv:runner
fi
exec clustercode devbox --api "$CLUSTERCODE_API_URL" "${identity[@]}" --token-stdin <<<"$token"
