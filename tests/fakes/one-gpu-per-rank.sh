#!/bin/sh
# One GPU per rank, as Slurm's --gpus-per-task=1 or --gpu-bind=single:1 set it:
# CUDA_VISIBLE_DEVICES is this rank's local rank (Open MPI's), then runs "$@".
CUDA_VISIBLE_DEVICES=${OMPI_COMM_WORLD_LOCAL_RANK:-0} exec "$@"
