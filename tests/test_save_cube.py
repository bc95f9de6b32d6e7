"""``eq.save_cube`` (issue 35, item 3): atomic NetCDF / zarr writes with checksums that
``open_cube`` reads back, never half-written over the old file."""

from __future__ import annotations

import os

import numpy as np
import pytest
import xarray as xr

import evaluq as eq


@pytest.fixture
def cube():
    return eq.simulate_cube(n_models=3, n_languages=4, n_seeds=2, n_boot=20, rng=0)


@pytest.mark.parametrize("name", ["cube.nc", "cube.zarr"])
def test_round_trip(tmp_path, cube, name):
    path = tmp_path / name
    eq.save_cube(cube, path)
    back = eq.open_cube(path)
    xr.testing.assert_identical(back.load().drop_attrs(), cube.drop_attrs())
    assert not [p for p in os.listdir(tmp_path) if p.endswith(".partial")]


@pytest.mark.parametrize("name", ["cube.nc", "cube.zarr"])
def test_an_existing_path_needs_overwrite(tmp_path, cube, name):
    path = tmp_path / name
    eq.save_cube(cube, path)
    with pytest.raises(FileExistsError, match="overwrite=True"):
        eq.save_cube(cube, path)
    other = eq.simulate_cube(n_models=3, n_languages=4, n_seeds=2, n_boot=20, rng=1)
    eq.save_cube(other, path, overwrite=True)
    np.testing.assert_array_equal(eq.open_cube(path)["score"].values, other["score"].values)
    assert sorted(os.listdir(tmp_path)) == [name]


def test_overwriting_the_file_the_cube_was_opened_from(tmp_path, cube):
    """The case xarray's in-place to_netcdf gets wrong: the cube read from the file it
    replaces."""
    path = tmp_path / "cube.nc"
    eq.save_cube(cube, path)
    opened = eq.open_cube(path)
    opened["score"] = opened["score"] + 1.0
    eq.save_cube(opened, path, overwrite=True)
    np.testing.assert_allclose(eq.open_cube(path)["score"].values, cube["score"].values + 1.0)


def test_a_failed_write_leaves_the_old_file_whole(tmp_path, cube, monkeypatch):
    path = tmp_path / "cube.nc"
    eq.save_cube(cube, path)
    before = path.read_bytes()

    def boom(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(xr.Dataset, "to_netcdf", boom)
    with pytest.raises(OSError, match="disk full"):
        eq.save_cube(cube, path, overwrite=True)
    assert path.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["cube.nc"]


def test_bad_input(tmp_path, cube):
    with pytest.raises(eq.CubeError):
        eq.save_cube(xr.Dataset(), tmp_path / "x.nc")
    with pytest.raises(TypeError, match="`path`"):
        eq.save_cube(cube, 5)
    with pytest.raises(TypeError, match="`overwrite`"):
        eq.save_cube(cube, tmp_path / "y.nc", overwrite="yes")
    assert not (tmp_path / "x.nc").exists()
