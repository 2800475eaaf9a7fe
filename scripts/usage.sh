# Sourced first by every bash script of the project with the script's own
# arguments: with -h or --help it prints the script's header comment (its
# usage) and exits 0, before any work.
case "${1:-}" in
  -h | --help)
    awk 'NR == 1 { next } /^#/ { sub(/^# ?/, ""); print; next } { exit }' "$0"
    exit 0
    ;;
esac
