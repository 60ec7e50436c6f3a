"""Beyond the papers: neighbour embeddings of all 70,000 MNIST digits, one P.

Every method embeds the same sparse P: perplexity-calibrated over the k = 3 perplexity
nearest neighbours in the PCA-50 space, symmetrised (:mod:`embedlab.knn_affinities`):

    tsne      our t-SNE R^2, repulsion by FFT (:mod:`embedlab.kernels.neighbour_fft`)
    snest     our SNEST R^{2,1}, FFT where its grid fits under the cap, otherwise that epoch
              exact (the table counts those epochs)
    ee        our Elastic Embedding with uniform v- = 1 (FFT), lambda = lam_n / n
    opentsne  openTSNE's FFT t-SNE (TSNEEmbedding on PrecomputedAffinities) from our t-SNE's
              start, with the same schedule and learning rate

Schedule (t-SNE and openTSNE): ``max_iter`` epochs, the first ``exaggeration_epochs`` with the
attraction x ``exaggeration``, momentum switching at ``momentum_epochs``, one learning rate
throughout; "auto" = n / (4 exaggeration): openTSNE's (Belkina et al. 2019) n / exaggeration
for our gradient, 4x openTSNE's (the factor 4 of :mod:`embedlab.kernels.neighbour`), so
openTSNE is given 4x ours. openTSNE runs one ``optimize`` per stretch of constant exaggeration
and momentum, without its step clipping (``max_step_norm=None``; ours has none); its gains
follow 0.8 gain + min_gain where ours take max(0.8 gain, min_gain). Our methods evaluate their
own cost only every ``cost_every`` epochs (the gradient every epoch: the same run, without a log
per non-zero of P at the other epochs), as openTSNE evaluates its KL only now and then.
SNEST keeps the epochs, momentum and learning rate but its paper's exaggeration (4 for 100
epochs; at 12 for 250 its time coordinates blew up on MNIST n = 1000 and 2000 at time ratio
0.01) and a time learning rate ``time_ratio`` x the space one. EE is the Elastic Embedding
estimator as smallvis runs it (no exaggeration, scaled-PCA start, the schedule's momentum) at
the same learning rate; lambda ~ 1 / n keeps the map's local scale (the neighbour distance),
and lam_n = 0.01 gave the lowest exact SNE-kernel KL of 0.003, 0.01 and 0.03 at n = 1000 and
n = 2000 (MNIST, 750 epochs).

Measures (:func:`.measures.measure`, the same for every map): the wall seconds of the fit
alone (each fit first warms its compiled code up on 300 points), epochs, the exact KL(P || Q)
of the final map with the method's output kernel (EE: the Gaussian exp(-d^2) of its
repulsion), evaluated once by the exact pair kernel (O(n^2) time, O(n) memory); the 10-NN
preservation against the PCA-50 neighbours of the affinity step; the leave-one-out 1-NN error
by digit. SNEST's neighbour measures use its space coordinates (the map as drawn).

- :mod:`.settings`: each step's settings (the config's ``scale`` section, schema
  ``workflow/schemas/scale.schema.yaml``);
- :mod:`.affinities`: the shared sparse P, its neighbours and PCA scores (one file);
- :mod:`.schedule`: the learning rate and schedule of every method, openTSNE's replay of it;
- :mod:`.fits`: each method's fit of the shared P, timed after a warm-up;
- :mod:`.measures`: the measures of a map and the table of every map;
- :mod:`.steps`: the workflow's steps (paths in, files out).
"""
