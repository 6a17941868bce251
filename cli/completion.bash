# SPDX-License-Identifier: BSD-3-Clause
# bash completion for nidus (installed as share/bash-completion/completions/nidus).
_nidus()
{
    local cur prev words cword
    _init_completion 2>/dev/null || {
        cur=${COMP_WORDS[COMP_CWORD]}
        prev=${COMP_WORDS[COMP_CWORD-1]}
        words=("${COMP_WORDS[@]}")
        cword=$COMP_CWORD
    }
    local commands="create add check del count info verify build merge push pull copy help"
    local create_opts="--type --capacity --error --fingerprint-bits --bucket-size --semi-sort --expansion --max-kicks --window --max-memory --force --help"
    if [[ $cword -eq 1 ]]; then
        COMPREPLY=($(compgen -W "$commands -V --version -h --help" -- "$cur"))
        return
    fi
    case $prev in
        --type) COMPREPLY=($(compgen -W "cuckoo bloom counting-bloom fuse" -- "$cur")); return ;;
        --bucket-size) COMPREPLY=($(compgen -W "1 2 4 8" -- "$cur")); return ;;
        --from) [[ ${words[1]} == copy ]] && return; COMPREPLY=($(compgen -f -- "$cur")); return ;;
        --capacity|--error|--fingerprint-bits|--expansion|--max-kicks|--window|--max-memory|--now|--url|--to|--match) return ;;
    esac
    local opts
    case ${words[1]} in
        create) opts=$create_opts ;;
        build) opts="--from --keep-going --now $create_opts" ;;
        add|del) opts="--keep-going --now --help" ;;
        check|count) opts="--now --help" ;;
        info) opts="--json --now --help" ;;
        push|pull) opts="--url --force --help" ;;
        copy) opts="--from --to --match --replace --help"
              [[ $cur == -* ]] || return ;;
        help) COMPREPLY=($(compgen -W "$commands" -- "$cur")); return ;;
        *) opts="--help" ;;
    esac
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$opts" -- "$cur"))
    else
        COMPREPLY=($(compgen -f -- "$cur"))
    fi
}
complete -o filenames -F _nidus nidus
