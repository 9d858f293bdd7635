/**
 * @file fftwf_lock.h
 * FFTW's planner is not thread-safe, and single-precision FFTW is one planner
 * for the whole process: every fftwf plan (the CPU backend's, the
 * suppressor's, the neural stage's own inference) is made and destroyed
 * between these, whichever layer makes it. A plain mutex: control and build
 * threads only, never the audio path.
 */
#ifndef GPUFIR_FFTWF_LOCK_H
#define GPUFIR_FFTWF_LOCK_H

void gf_fftwf_planner_lock(void);
void gf_fftwf_planner_unlock(void);

#endif
