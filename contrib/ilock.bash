# bash completion for ilock and ilocktop. Option names come from the
# installed binary's own help (`ilock CMD -h`), so they cannot drift from
# it; the few value lists below are checked against the binary by
# tests/integration/test_cli.py. Works with or without the bash-completion
# package: `source contrib/ilock.bash`, or let `make install` put it in
# $(PREFIX)/share/bash-completion/completions/.

_ilock_values() {
	case $1 in
	--ops) echo "syscalls io all off" ;;
	--holds) echo "off xfs all" ;;
	--class) echo "i_rwsem invalidate_lock xfs_ilock IOLOCK MMAPLOCK ILOCK jbd2_wait" ;;
	--fs) echo "xfs ext4 btrfs tmpfs zfs f2fs nfs fuse overlay" ;;
	-o|--sort) echo "wait waits max p99 shared exclusive" ;;
	esac
}

_ilock() {
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
	local prog=${COMP_WORDS[0]} cmd opts
	COMPREPLY=()
	if [[ ${prog##*/} == ilocktop ]]; then
		cmd=top
	elif ((COMP_CWORD == 1)); then
		COMPREPLY=($(compgen -W "$("$prog" --help 2>/dev/null |
			awk '/^examples:/{exit} /^  [a-z]+ /{print $1}') --help --version" -- "$cur"))
		return
	else
		cmd=${COMP_WORDS[1]}
	fi
	# --opt=value
	if [[ $cur == --*=* ]]; then
		COMPREPLY=($(compgen -W "$(_ilock_values "${cur%%=*}")" -- "${cur#*=}"))
		return
	fi
	case $prev in
	--ops|--holds|--class|--fs)
		COMPREPLY=($(compgen -W "$(_ilock_values "$prev")" -- "$cur"))
		return ;;
	-o|--sort|--output)
		if [[ $cmd == top ]]; then
			COMPREPLY=($(compgen -W "$(_ilock_values -o)" -- "$cur"))
		else
			COMPREPLY=($(compgen -f -- "$cur"))
		fi
		return ;;
	-D|--dev|--cgroup)
		COMPREPLY=($(compgen -d -- "$cur"))
		return ;;
	--html)
		COMPREPLY=($(compgen -f -- "$cur"))
		return ;;
	-d|--duration|-i|--interval|-p|--pid|-c|--comm|--ino|-n|--top|--iterations|--rows|\
	--max-inodes|--hold-sample|--hold-exact-rate|--wait-sample|--wait-exact-rate|\
	--listen|--top-inodes|--max-pairs|--http-timeout|--from|--to)
		return ;;  # a value of the user's own
	esac
	if [[ $cur == -* ]]; then
		opts=$("$prog" ${cmd:+"$cmd"} -h 2>/dev/null | grep -oE -- '(^|[ ,\[])--?[a-zA-Z][a-z-]*' |
			sed 's/^[ ,[]//' | sort -u)
		COMPREPLY=($(compgen -W "$opts" -- "$cur"))
	elif [[ $cmd == report || $cmd == diff ]]; then
		COMPREPLY=($(compgen -f -- "$cur"))
	fi
}
complete -F _ilock ilock ilocktop
