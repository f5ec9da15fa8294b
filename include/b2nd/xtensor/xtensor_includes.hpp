// The one place that knows where xtensor keeps its headers: flat paths up to 0.25 (Debian
// bookworm ships 0.24), core/ containers/ views/ subfolders from 0.26 on.
#pragma once

#if __has_include(<xtensor/containers/xarray.hpp>)
#include <xtensor/containers/xadapt.hpp>
#include <xtensor/containers/xarray.hpp>
#include <xtensor/containers/xtensor.hpp>
#include <xtensor/core/xaccessible.hpp>
#include <xtensor/core/xexpression.hpp>
#include <xtensor/core/xiterable.hpp>
#include <xtensor/core/xnoalias.hpp>
#include <xtensor/core/xoperation.hpp>
#include <xtensor/core/xstrides.hpp>
#include <xtensor/utils/xutils.hpp>
#include <xtensor/views/xbroadcast.hpp>
#include <xtensor/views/xslice.hpp>
#include <xtensor/views/xview.hpp>
#if __has_include(<xtensor/reducers/xreducer.hpp>)
#include <xtensor/generators/xgenerator.hpp>
#include <xtensor/reducers/xreducer.hpp>
#include <xtensor/views/xdynamic_view.hpp>
#include <xtensor/views/xfunctor_view.hpp>
#include <xtensor/views/xindex_view.hpp>
#include <xtensor/views/xrepeat.hpp>
#include <xtensor/views/xstrided_view.hpp>
#endif
#else
#include <xtensor/xaccessible.hpp>
#include <xtensor/xadapt.hpp>
#include <xtensor/xarray.hpp>
#include <xtensor/xbroadcast.hpp>
#include <xtensor/xexpression.hpp>
#include <xtensor/xiterable.hpp>
#include <xtensor/xnoalias.hpp>
#include <xtensor/xoperation.hpp>
#include <xtensor/xslice.hpp>
#include <xtensor/xstrides.hpp>
#include <xtensor/xtensor.hpp>
#include <xtensor/xutils.hpp>
#include <xtensor/xview.hpp>
// For b2nd::lazy_expression_tag (assign.hpp): the headers of every expression kind that has an
// extension base per expression tag.
#include <xtensor/xdynamic_view.hpp>
#include <xtensor/xfunctor_view.hpp>
#include <xtensor/xgenerator.hpp>
#include <xtensor/xindex_view.hpp>
#include <xtensor/xreducer.hpp>
#include <xtensor/xrepeat.hpp>
#include <xtensor/xstrided_view.hpp>
#endif
