"""The one package a search of the tree cannot find: configs/ (top level in the repository) ships as
maxflops.configs. Everything else is in pyproject.toml, and setuptools finds every package under maxflops/."""

from setuptools import find_packages, setup

setup(packages=find_packages(include=["maxflops", "maxflops.*"]) + ["maxflops.configs"])
