#!/bin/sh
# A socket's GPUs per rank, as Slurm's --gpu-bind=closest sets them on an HGX
# node (8 tasks, 2 sockets: tasks 0-3 see GPUs 0-3, tasks 4-7 see 4-7):
# CUDA_VISIBLE_DEVICES is the GPUs of this rank's socket, the host's
# CCDIAG_FAKECUDA_GPUS split over CCDIAG_FAKE_SOCKETS (2) in order, the local
# ranks likewise (Open MPI's), then runs "$@".
n=${CCDIAG_FAKECUDA_GPUS:-8} s=${CCDIAG_FAKE_SOCKETS:-2}
r=${OMPI_COMM_WORLD_LOCAL_RANK:-0} size=${OMPI_COMM_WORLD_LOCAL_SIZE:-1}
sock=$((r * s / size)) per=$((n / s))
v=$((sock * per)) list=
while [ "$v" -lt $(((sock + 1) * per)) ]; do
	list=${list:+$list,}$v
	v=$((v + 1))
done
CUDA_VISIBLE_DEVICES=$list exec "$@"
